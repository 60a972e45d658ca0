"""`gpuplan simulate` (not yet implemented)."""
