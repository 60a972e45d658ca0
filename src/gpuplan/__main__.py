from gpuplan.cli import entry

entry()
