"""`gpuplan probe` (not yet implemented)."""
