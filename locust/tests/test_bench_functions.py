import shutil

import pytest

from herald_load.bench import functions

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None,
                                reason="needs redis-server (scripts/install-deps.sh)")


def test_the_store_library_is_measured_step_by_step():
    figures = functions.measure(functions.LIBRARY, 3000)

    assert list(figures) == ["import new", "import other new", "import again", "device_read", "outcome_record_all"]
    assert figures["import new"] > 0   # 3,000 registrations take Redis well over one clock tick


def test_a_library_without_the_functions_fails_loudly(tmp_path):
    library = tmp_path / "other.lua"
    library.write_text("#!lua name=herald\nredis.register_function('noop', function() return 0 end)\n")

    with pytest.raises(RuntimeError, match="Function not found"):
        functions.measure(library, 10)
