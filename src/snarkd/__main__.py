import sys

from snarkd.cli import main

sys.exit(main())
