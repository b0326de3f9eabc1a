"""python -m snarkd.config example|readme: regenerate examples/snarkd.toml or the README's settings table."""

import sys

from snarkd.config.render import main

sys.exit(main(sys.argv[1:]))
