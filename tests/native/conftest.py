import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from helpers import CURVES  # noqa: E402


@pytest.fixture(params=CURVES, ids=[c.name for c in CURVES])
def curve(request):
    return request.param
