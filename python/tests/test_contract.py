"""The generated contract models accept what the worker accepts and name what it refuses."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from aggregation_connections.contract import ConnectionInput, SecurityChallenge

LOGIN_ID = "1b3f0a4e-9a52-4f3c-8a43-0b1f6c9a2d11"


def test_a_cached_connection_with_defaults_goes_on_the_wire_with_the_workers_field_names() -> None:
    connection = ConnectionInput.model_validate(
        {"customerId": "lender-1", "session": {"kind": "cached", "loginId": LOGIN_ID}, "products": {"accountsDetail": {"WithTransactions": True}}}
    )
    assert connection.customer_id == "lender-1"
    assert connection.timing.poll_interval_ms == 10_000 and connection.unattended is False
    assert connection.to_wire() == {
        "customerId": "lender-1",
        "session": {"kind": "cached", "loginId": LOGIN_ID},
        "products": {"accountsDetail": {"WithTransactions": True}},
    }


def test_python_names_build_the_same_input() -> None:
    from aggregation_connections.contract.models import ConnectionInputProducts, ConnectionInputSessionLive

    connection = ConnectionInput(
        customer_id="lender-1",
        session=ConnectionInputSessionLive(kind="live", institution="101732", username="tfa_text", password="Everyday"),
        products=ConnectionInputProducts(investments=True),
    )
    assert connection.to_wire()["session"] == {"kind": "live", "institution": "101732", "username": "tfa_text", "password": "Everyday"}


@pytest.mark.parametrize(
    ("bad", "where"),
    [
        ({"session": {"kind": "cached", "loginId": "not-a-uuid"}}, "session.cached.loginId"),
        ({"session": {"kind": "sideways"}}, "session"),
        ({"timing": {"pollIntervalMs": 0}}, "timing.pollIntervalMs"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_a_bad_input_names_the_field(bad: dict[str, object], where: str) -> None:
    good: dict[str, object] = {"customerId": "lender-1", "session": {"kind": "cached", "loginId": LOGIN_ID}, "products": {"investments": True}}
    with pytest.raises(ValidationError) as caught:
        ConnectionInput.model_validate({**good, **bad})
    assert where in str(caught.value)


def test_a_challenge_keeps_fields_the_service_adds() -> None:
    challenge = SecurityChallenge.model_validate({"Type": "MultipleChoice", "Prompt": "Pick one", "Iterables": ["a", "b"], "Hint": "x"})
    assert challenge.type == "MultipleChoice" and challenge.iterables == ["a", "b"]
    assert challenge.to_wire()["Hint"] == "x"


def test_a_challenge_of_a_type_the_spec_does_not_name_reads_as_it_came() -> None:
    # Institutions add types of their own (an SMS code, a plain question): any non-empty name up to 200.
    wire = {"Type": "SmsCode", "Prompt": "Enter the code we sent by SMS", "Iterables": ["***-***-1234"]}
    challenge = SecurityChallenge.model_validate(wire)
    assert challenge.type == "SmsCode" and challenge.iterables == ["***-***-1234"]
    assert challenge.to_wire() == wire
    for bad in ("", "x" * 201):
        with pytest.raises(ValidationError, match="Type"):
            SecurityChallenge.model_validate({**wire, "Type": bad})


def test_a_validation_error_never_quotes_the_password_and_repr_redacts_it() -> None:
    secret = "Everyday-is-secret"
    bad = {"customerId": "lender-1", "session": {"kind": "live", "institution": "", "username": "u", "password": secret}, "products": {"investments": True}}
    with pytest.raises(ValidationError) as caught:
        ConnectionInput.model_validate(bad)
    assert secret not in str(caught.value) and secret not in repr(caught.value)
    good = ConnectionInput.model_validate({**bad, "session": {**bad["session"], "institution": "101732"}})  # type: ignore[dict-item]
    assert secret not in repr(good) and secret not in str(good)
    assert good.to_wire()["session"]["password"] == secret, "the wire still carries it"


def test_a_bad_start_through_the_client_chains_no_secret(capsys: pytest.CaptureFixture[str]) -> None:
    import traceback

    from aggregation_connections.client.connections import ConnectionsClient
    from aggregation_connections.client.errors import InvalidConnectionInputError

    secret = "Everyday-is-secret"
    client = ConnectionsClient.__new__(ConnectionsClient)
    bad = {"customerId": "lender-1", "session": {"kind": "live", "institution": "", "username": "u", "password": secret}, "products": {"investments": True}}
    with pytest.raises(InvalidConnectionInputError) as caught:
        client._prepare_start("connection-lender-1:app-1", bad, "fail", None)
    printed = "".join(traceback.format_exception(caught.value))
    assert "session.live.institution" in printed
    assert secret not in printed, printed
