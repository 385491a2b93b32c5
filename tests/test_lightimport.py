"""``lightimport``'s stand-ins: jsonschema-rs and dataclasses import as they would
without them, the stand-ins never outlive the import, and the real modules come back
whole. Anything about ``sys.modules`` is checked in a fresh process."""

from __future__ import annotations

import datetime
import email.utils
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from profiles import examples

from kernelindex_sdk.base.lightimport import _parsedate_to_datetime

pytest.importorskip("jsonschema_rs")

ROOT = Path(__file__).resolve().parent.parent
ONE_VALID = str(sorted((ROOT / "tests" / "examples" / "valid").glob("*.json"))[0])


def _fresh(code: str, *args: str) -> str:
    """Run ``code`` in a new interpreter; its standard output (it must exit 0)."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True, text=True, check=False, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def _outcome(function: object, text: str) -> tuple[str, object]:
    """What ``function(text)`` returns (value and offset), or raises (type and message)."""
    try:
        value = function(text)  # type: ignore[operator]
    except Exception as error:  # the error itself is compared
        return ("raises", (type(error), str(error)))
    return ("returns", (value, repr(value), value.utcoffset()))


def test_build_info_is_the_plain_imports() -> None:
    show = "print(repr(m.jsonschema_rs.__build__))"
    plain = _fresh(f"import jsonschema_rs as m; {show}")
    light = _fresh(
        f"""
        import sys
        from kernelindex_sdk.base.lightimport import jsonschema_rs
        m = jsonschema_rs()
        assert 'email.utils' not in sys.modules and 'socket' not in sys.modules
        assert getattr(sys.modules['email'], 'utils', None) is None
        {show}
        """
    )
    assert light == plain and "info-time" in plain


def test_validate_one_file_leaves_no_stand_in_and_the_real_modules_load() -> None:
    code = """
        import atexit, sys

        def after():
            assert 'jsonschema_rs' in sys.modules
            for name in ('email.utils', 'inspect', 'socket', 'ast', 'platform', 'urllib.parse'):
                assert name not in sys.modules, name
            assert getattr(sys.modules.get('email'), 'utils', None) is None
            import email.utils, inspect, dataclasses
            assert email.utils.__file__.endswith('utils.py')
            assert email.utils.parsedate_to_datetime.__module__ == 'email.utils'
            assert not hasattr(email.utils, '__lightimport_standin__')
            assert inspect.__file__.endswith('inspect.py')

            @dataclasses.dataclass
            class Undocumented:
                x: int

            assert Undocumented.__doc__ == 'Undocumented(x: int)'
            assert dataclasses.inspect is inspect
            import pathlib, uuid, platform
            assert uuid.platform.system() == platform.system()
            # Anything else asked of the stand-in puts the real module in its place.
            assert uuid.platform.machine() == platform.machine()
            assert uuid.platform is platform and sys.modules['platform'] is platform
            assert pathlib.Path('/a b/é').as_uri() == 'file:///a%20b/%C3%A9'
            import urllib.parse
            assert pathlib.urlquote_from_bytes is urllib.parse.quote_from_bytes
            print('checked')

        atexit.register(after)
        from kernelindex_sdk.cli.main import main
        main(sys.argv[1:])
    """
    assert _fresh(code, "validate", ONE_VALID).endswith("checked\n")


def test_an_undocumented_dataclass_gets_the_real_inspect() -> None:
    """The stand-in for ``inspect`` turns into the real module on first use."""
    out = _fresh(
        """
        import sys
        import kernelindex_sdk, dataclasses
        assert 'inspect' not in sys.modules
        standin = dataclasses.inspect
        assert standin.__name__ == 'inspect'

        @dataclasses.dataclass(frozen=True)
        class Point:
            x: int
            y: str = 'a'

        import inspect
        assert dataclasses.inspect is inspect and inspect is not standin
        assert sys.modules['inspect'] is inspect
        print(Point.__doc__)
        """
    )
    assert out == "Point(x: int, y: str = 'a')\n"


def test_modules_loaded_before_are_used_as_they_are() -> None:
    _fresh(
        """
        import sys, inspect, email.utils, platform, urllib.parse
        real = email.utils.parsedate_to_datetime
        calls = []
        email.utils.parsedate_to_datetime = lambda text: calls.append(text) or real(text)
        import kernelindex_sdk, dataclasses
        assert dataclasses.inspect is inspect
        import uuid, pathlib
        assert uuid.platform is platform
        assert pathlib.urlquote_from_bytes is urllib.parse.quote_from_bytes
        from kernelindex_sdk.base.lightimport import jsonschema_rs
        module = jsonschema_rs()
        assert calls, 'the real email.utils was not used'
        assert sys.modules['email.utils'] is email.utils and sys.modules['inspect'] is inspect
        assert jsonschema_rs() is module
        """
    )


def test_a_failed_import_leaves_no_stand_in() -> None:
    _fresh(
        """
        import sys
        from kernelindex_sdk.base.lightimport import jsonschema_rs

        class Refuse:
            def find_spec(self, name, path=None, target=None):
                if name == 'jsonschema_rs':
                    raise ImportError('refused')

        sys.meta_path.insert(0, Refuse())
        try:
            jsonschema_rs()
        except ImportError as error:
            assert str(error) == 'refused'
        else:
            raise AssertionError('no ImportError')
        assert 'email.utils' not in sys.modules
        """
    )


def test_the_platform_stand_ins_system_is_platforms() -> None:
    import platform

    from kernelindex_sdk.base.lightimport import _platform_system

    assert _platform_system() == platform.system()


def test_other_attributes_come_from_the_real_module() -> None:
    """A module that imported ``email.utils`` while the stand-in stood gets the real
    functions from it."""
    _fresh(
        """
        import sys
        from kernelindex_sdk.base.lightimport import _StandingIn, _standin, _parsedate_to_datetime
        standin = _standin('email.utils', parsedate_to_datetime=_parsedate_to_datetime)
        with _StandingIn('email.utils', standin):
            import email.utils as seen
            assert seen is standin
            assert seen.formatdate(0, usegmt=True) == 'Thu, 01 Jan 1970 00:00:00 GMT'
            assert sys.modules['email.utils'] is not standin
        assert sys.modules['email.utils'].formatdate is seen.formatdate
        """
    )


def _same(text: str) -> None:
    real = email.utils.parsedate_to_datetime
    assert _outcome(_parsedate_to_datetime, text) == _outcome(real, text)


_DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun", "mon", "Xyz"]
# (test_formatted_dates_... draws only the stand-in's own form; this one mostly near it.)
_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


@st.composite
def _strict_forms(draw: st.DrawFn) -> str:
    """The stand-in's own form, with out-of-range fields and near misses mixed in."""

    def two(upper: int) -> str:
        return f"{draw(st.integers(0, upper)):02d}"

    year = draw(
        st.sampled_from(["2026", "1999", "9999", "2026", "0099", "0999", "20x6", "２０２６"])
    )
    sign = draw(st.sampled_from(["+", "+", "+", "+", "-", " "]))
    month = draw(st.sampled_from([*_MONTHS, "oct", "Okt"]))
    return (
        f"{draw(st.sampled_from(_DAYS))}, {two(31)} {month} {year} "
        f"{two(25)}:{two(61)}:{two(61)} {sign}{two(25)}{two(70)}"
    )


@settings(max_examples=examples(300))
@given(st.one_of(_strict_forms(), st.text(max_size=40)))
@example("Tue, 27 Oct 2026 10:17:51 +0000")
@example("Tue, 27 Oct 2026 10:17:51 -0000")
@example("Tue, 27 Oct 26 10:17:51 +0000")
@example("Sun, 29 Feb 2026 10:17:51 +2400")
def test_the_stand_ins_parser_is_the_real_one(text: str) -> None:
    assert _outcome(_parsedate_to_datetime, text) == _outcome(
        email.utils.parsedate_to_datetime, text
    )


@settings(max_examples=examples(300))
@given(
    st.datetimes(
        min_value=datetime.datetime(1000, 1, 1),
        timezones=st.integers(-23 * 60 - 59, 23 * 60 + 59).map(
            lambda minutes: datetime.timezone(datetime.timedelta(minutes=minutes))
        ),
    )
)
def test_formatted_dates_parse_as_the_real_function_parses_them(moment: datetime.datetime) -> None:
    text = email.utils.format_datetime(moment)
    assert _outcome(_parsedate_to_datetime, text) == _outcome(
        email.utils.parsedate_to_datetime, text
    )
