"""`gpuplan export` (not yet implemented)."""
