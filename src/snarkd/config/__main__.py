"""python -m snarkd.config example|readme [PAGE]: regenerate examples/snarkd.toml or the settings table (docs/daemon.md)."""

import sys

from snarkd.config.render import main

sys.exit(main(sys.argv[1:]))
