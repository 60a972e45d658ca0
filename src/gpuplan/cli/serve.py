"""`gpuplan serve` (not yet implemented)."""
