"""The ratio benchmark (see poolspec/bench.py): python benchmarks/run.py [--json FILE] [--plot FILE] ..."""

import sys

from poolspec.cli import bench_main as main

if __name__ == "__main__":
    sys.exit(main())
