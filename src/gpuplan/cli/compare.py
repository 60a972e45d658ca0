"""`gpuplan compare` and `gpuplan init` (filled in with the compare engine)."""
