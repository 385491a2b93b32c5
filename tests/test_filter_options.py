"""``compare`` and ``ls`` share one definition of their filter options.

``--kernel``, ``--pass``, ``--gpu``, ``--metric`` (and ``--format``'s shape) are declared
once (:mod:`kernelindex_sdk.cli.filter_options`): same names, choices and help texts in
both commands, and the same refusal of a metric word outside the one list.
"""

from __future__ import annotations

import io

import click
import pytest

from kernelindex_sdk.base.metrics import METRIC_ALIASES
from kernelindex_sdk.cli.compare_cmd import compare_command, run_compare
from kernelindex_sdk.cli.compare_options import CompareOptions
from kernelindex_sdk.cli.filter_options import PASSES
from kernelindex_sdk.cli.ls_cmd import LsOptions, ls_command, run_ls
from kernelindex_sdk.compare.grouping import PASS_ORDER

SHARED = ("kernels", "passes", "gpus", "metrics")


def options_of(command: click.Command) -> dict[str, click.Parameter]:
    return {param.name: param for param in command.params if param.name}


@pytest.mark.parametrize("name", SHARED)
def test_the_filter_options_are_one_definition(name: str) -> None:
    ls, compare = options_of(ls_command)[name], options_of(compare_command)[name]
    assert isinstance(ls, click.Option) and isinstance(compare, click.Option)
    assert ls.opts == compare.opts and ls.help == compare.help and ls.help
    assert ls.multiple and compare.multiple
    assert ls.type.to_info_dict() == compare.type.to_info_dict()


def test_their_choices_come_from_the_library() -> None:
    assert tuple(PASS_ORDER) == PASSES
    metric = options_of(ls_command)["metrics"]
    assert isinstance(metric.type, click.Choice)
    assert set(metric.type.choices) == set(METRIC_ALIASES)


def test_format_is_declared_alike() -> None:
    ls, compare = options_of(ls_command)["format_"], options_of(compare_command)["format_"]
    assert isinstance(ls, click.Option) and isinstance(compare, click.Option)
    assert ls.opts == compare.opts == ["--format"]
    assert ls.default == compare.default == "text"


def test_an_unknown_metric_word_is_one_usage_error_in_both(tmp_path: object) -> None:
    err = io.StringIO()
    assert run_ls(LsOptions(("x",), metrics=("throughput",)), out=io.StringIO(), err=err) == 2
    ls_message = err.getvalue().removeprefix("kernelindex ls: ")
    err = io.StringIO()
    options = CompareOptions(("x",), metrics=("throughput",))
    assert run_compare(options, out=io.StringIO(), err=err) == 2
    assert err.getvalue().removeprefix("kernelindex compare: ") == ls_message
    assert ls_message.startswith("unknown --metric 'throughput' (choose from ")
    assert ls_message.count("\n") == 1
