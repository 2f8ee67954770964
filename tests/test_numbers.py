"""One reader for every number a person or a file gives (suite/inputs/numbers.py): plain ASCII decimal only
(no `_`, no h:mm, no hex, no inf/nan), finite, and within the sane range of its kind. Each case below was
read as another number, or passed, before: `float("3_06")` is 306, `--min-change 5_0` was 50 %."""

from __future__ import annotations

import pytest

from suite.cli import main
from suite.inputs import numbers
from suite.inputs.errors import UserError


@pytest.mark.parametrize(
    "text", ["3_06", "1_000", "1:30", "0x10", "inf", "nan", "-inf", "1e400", "٣", "", "1e-300"]
)
def test_a_price_is_plain_decimal_in_range(text):
    with pytest.raises(UserError, match=r"--usd-per-hour must be a price in \$ per hour from 0.0001 to "):
        numbers.number("--usd-per-hour", text, numbers.PRICE_PER_HOUR)


@pytest.mark.parametrize(
    ("text", "value"), [("3.06", 3.06), (" 12 ", 12.0), ("1e1", 10.0), (".5", 0.5), (2, 2.0)]
)
def test_plain_decimals_are_read(text, value):
    assert numbers.number("--usd-per-hour", text, numbers.PRICE_PER_HOUR) == value


def test_the_message_names_the_slip_and_cuts_long_values_short():
    with pytest.raises(UserError, match=r"got '3_06' \(no '_' in numbers"):
        numbers.number("x", "3_06", numbers.PRICE_PER_HOUR)
    with pytest.raises(UserError, match=r"no h:mm"):
        numbers.number("'hours'", "1:30", numbers.HOURS)
    with pytest.raises(UserError) as error:
        numbers.number("'hours'", "9" * 5000, numbers.HOURS)
    assert len(str(error.value)) < 200


@pytest.mark.parametrize("value", [True, 1e-320, float("nan"), 10**400, [1], None])
def test_only_numbers_and_text_are_numbers(value):
    with pytest.raises(UserError):
        numbers.number("'hours'", value, numbers.HOURS)


@pytest.mark.parametrize("value", ["1_000", "٣", "+", "1.0", 1.0, True, "9" * 5000])
def test_whole_numbers_refuse_what_int_would_read(value):
    with pytest.raises(UserError):
        numbers.positive_int("--steps", value)


def test_grouped_thousands_only_where_asked():
    assert numbers.number("throughput", "1,234.5", numbers.RATE, grouped=True) == 1234.5
    with pytest.raises(UserError):
        numbers.number("throughput", "1,234.5", numbers.RATE)
    with pytest.raises(UserError):
        numbers.number("throughput", "12,34", numbers.RATE, grouped=True)


@pytest.mark.parametrize("value", ["5_0", "inf", "nan", "100"])
def test_min_change_is_a_plain_percentage(value):
    from suite.compare.comparison import parse_min_change

    with pytest.raises(UserError, match="--min-change must be a percentage"):
        parse_min_change(value)
    assert parse_min_change("5%") == pytest.approx(0.05)


@pytest.mark.parametrize("value", ["3_06", "1e-300", "20000"])
def test_scale_usd_per_hour_is_a_price(value, capsys):
    assert main(["scale", "--nproc", "1", "--usd-per-hour", value]) == 2
    assert "--usd-per-hour must be a price in $ per hour" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("option", "value"), [("--hours", "0_5"), ("--hours", "1e-300"), ("--max-cost", "5_0")]
)
def test_fleet_plan_numbers(option, value, capsys):
    assert main(["fleet", "plan", "--instances", "g6e.xlarge", option, value]) == 2
    err = capsys.readouterr().err
    assert f"{option} must be" in err and repr(value) in err


@pytest.mark.parametrize("value", ["1_0", "inf", "nan", "٣"])
def test_model_override_values_python_alone_reads_as_numbers(value):
    from suite.inputs.sizes import parse_override

    with pytest.raises(UserError, match="--model-override ngf"):
        parse_override("--model-override", f"ngf={value}")


def test_model_override_values_keep_their_types():
    from suite.inputs.sizes import parse_override

    assert parse_override("--model-override", "ngf=8") == ("ngf", 8)
    assert parse_override("--model-override", "lr=0.5") == ("lr", 0.5)
    assert parse_override("--model-override", "arch=resnet50") == ("arch", "resnet50")
    assert parse_override("--model-override", "bias=true") == ("bias", True)


@pytest.mark.parametrize("value", ["1_0", "inf"])
def test_dist_timeout_is_checked_by_the_one_reader(value):
    from suite.inputs.input_checks import check_timeout

    with pytest.raises(UserError, match="--dist-timeout must be a positive number of seconds"):
        check_timeout("--dist-timeout", value)
