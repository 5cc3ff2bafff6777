"""The one set of JSON field validators (``custom_metrics.common.fields``) that the results
reader, the IBE inputs, features and reports share: any JSON value gives a value of the
promised type and range, or a FieldError naming the field and the value; nothing else."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given

from custom_metrics.common import fields
from tests.fuzz.support import json_values

pytestmark = pytest.mark.fuzz
FIELD = 'datasets["copa"].test_questions'


def _checked(call, raw):
    try:
        return call(raw), None
    except fields.FieldError as error:
        assert FIELD in str(error) and repr(raw) in str(error)
        return None, error


@given(json_values)
@example(10**400)  # an integer no float holds: infinite, never an OverflowError
@example("7")
@example(True)
def test_any_json_value_is_typed_or_a_named_field_error(raw: object) -> None:
    number = fields.number(raw)
    assert number is None or isinstance(number, float)
    assert (number is None) == (isinstance(raw, bool) or not isinstance(raw, (int, float)))

    value, _ = _checked(lambda r: fields.finite(r, FIELD, strings=True), raw)
    assert value is None or (isinstance(value, float) and math.isfinite(value))

    count, _ = _checked(lambda r: fields.count(r, FIELD, "questions"), raw)
    assert count is None or (type(count) is int and count >= 0)

    accuracy, _ = _checked(lambda r: fields.accuracy(r, FIELD), raw)
    assert accuracy is None or math.isnan(accuracy) or 0.0 <= accuracy <= 1.0

    if raw is not None:
        integer, error = _checked(lambda r: fields.integer(r, FIELD), raw)
        assert error is not None or type(integer) is int
        if isinstance(raw, float) and not raw.is_integer():
            assert error is not None  # never rounded

    text, _ = _checked(lambda r: fields.text(r, FIELD), raw)
    assert text is None or (isinstance(text, str) and text == text.strip() and text)
