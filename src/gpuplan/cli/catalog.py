"""`gpuplan catalog gpus|offers`."""
