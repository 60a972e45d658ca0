"""`gpuplan plan` (not yet implemented)."""
