"""`gpuplan audit` (not yet implemented)."""
