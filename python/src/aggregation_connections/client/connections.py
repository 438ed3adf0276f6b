"""The lending pipeline's async client for aggregation connections, mirroring src/client/connections.ts:
start one by business key (or start it and wait for its first step), read its state, answer its
challenges, wait for its result, cancel it, and list connections through Temporal visibility.

What it returns is the JSON the worker wrote as the contract's generated models
(aggregation_connections.contract, from src/contract/connection/connection-schemas.ts): a connection's state and
result, its first step and an answer's outcome (unions told apart by ``step`` and ``outcome``); ``list``
gives the small dataclass below. What it raises is a ConnectionClientError subclass (./errors.py).
Payloads go through the worker's codec (aggregation_connections.codec), so Temporal only sees them
encrypted, and the TypeScript worker reads them.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import pydantic
import temporalio.client
import temporalio.common
import temporalio.converter
import temporalio.exceptions
import temporalio.service
from temporalio.client import Client, WithStartWorkflowOperation, WorkflowExecution, WorkflowHandle
from temporalio.common import (
    Priority,
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDConflictPolicy,
    WorkflowIDReusePolicy,
)
from temporalio.converter import ExternalStorage

from ..codec.encryption_codec import EncryptionCodec
from ..contract import AnswerOutcome, ConnectionInput, ConnectionResult, ConnectionState, FirstStep, SecurityChallenge

# The names src/contract/connection/connection-definitions.ts and search-attributes.ts define, generated into
# contract/names.py; re-exported (`X as X`) under the names this module has always offered.
from ..contract.names import (
    AWAIT_FIRST_STEP_UPDATE as AWAIT_FIRST_STEP_UPDATE,
    CONNECTION_STATE_QUERY as CONNECTION_STATE_QUERY,
    CONNECTION_STATUS_KEY as CONNECTION_STATUS_KEY,
    CONNECTION_STATUSES as CONNECTION_STATUSES,
    CONNECTION_WORKFLOW_TYPE as CONNECTION_WORKFLOW_TYPE,
    CUSTOMER_ID_KEY as CUSTOMER_ID_KEY,
    INSTITUTION_KEY as INSTITUTION_KEY,
    LOGIN_ID_KEY as LOGIN_ID_KEY,
    PRIORITY_KEY_MAX,
    PRIORITY_KEY_MIN,
    RUNNING_CONNECTION_STATUSES,
    SUBMIT_ANSWER_UPDATE as SUBMIT_ANSWER_UPDATE,
)
from ..payload_store import S3StorageDriver, external_storage_from_env
from ..settings.api_key_file import TemporalApiKeyFileError, read_api_key_file
from ..settings.client import DEFAULT_CUSTOMER_ID, ClientSettings, PriorityPolicy, client_settings_from_env
from ..settings.encryption import codec_from_env
from .answers import describe_validation, parse_answer
from .api_key_file import ApiKeyFileWatch, watch_api_key_file
from .business_key import parse_business_key, parse_workflow_id
from .errors import (
    CONNECTION_FAILURE_TYPES,
    AnswerRejectedError,
    ConnectionAlreadyEndedError,
    ConnectionClientError,
    ConnectionFailedError,
    ConnectionNotFoundError,
    InvalidConnectionInputError,
    TemporalUnavailableError,
)
from .unreadable_history import unreadable_query_error

RerunPolicy = Literal["never", "if-failed", "always"]
_REUSE_POLICY: Mapping[str, WorkflowIDReusePolicy] = {
    "never": WorkflowIDReusePolicy.REJECT_DUPLICATE,
    "if-failed": WorkflowIDReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
    "always": WorkflowIDReusePolicy.ALLOW_DUPLICATE,
}
_SERVICE_CODE = re.compile(r"[A-Z][A-Z0-9_]+")
# The updates' answers are unions of models: read through their TypeAdapters, made once.
_FIRST_STEP: pydantic.TypeAdapter[FirstStep] = pydantic.TypeAdapter(FirstStep)
_ANSWER_OUTCOME: pydantic.TypeAdapter[AnswerOutcome] = pydantic.TypeAdapter(AnswerOutcome)
_LIST_FIELDS = {"status": CONNECTION_STATUS_KEY, "customer_id": CUSTOMER_ID_KEY, "institution": INSTITUTION_KEY, "login_id": LOGIN_ID_KEY}


@dataclass(frozen=True)
class ConnectionSummary:
    """What visibility knows of one connection (also of ended ones, without a worker)."""

    workflow_id: str
    run_id: str | None
    #: The workflow's ConnectionStatus search attribute (None if it holds something else).
    status: str | None
    #: Temporal's execution status: RUNNING, COMPLETED, FAILED, ...
    execution_status: str | None
    customer_id: str | None
    institution: str | None
    login_id: str | None
    started_at: datetime
    closed_at: datetime | None


def data_converter_for(codec: EncryptionCodec | None, external_storage: ExternalStorage | None = None) -> temporalio.converter.DataConverter:
    """The SDK's default JSON converter with the worker's codec (none when PAYLOAD_ENCRYPTION=off) and its
    payload store (none when PAYLOAD_STORE is off): large inputs go to the store, stored results are read back."""
    return dataclasses.replace(temporalio.converter.DataConverter.default, payload_codec=codec, external_storage=external_storage)


def quote_visibility_value(value: str) -> str:
    """A double-quoted visibility string literal: backslashes and quotes escaped, control characters refused."""
    if re.search(r"[\x00-\x1f\x7f]", value):
        raise InvalidConnectionInputError(f"list filter value {json.dumps(value)} contains control characters")
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def visibility_query(*, status: str | None = None, customer_id: str | None = None, institution: str | None = None, login_id: str | None = None) -> str:
    """``WorkflowType = "connectionWorkflow" AND ConnectionStatus = "AwaitingAnswer" AND CustomerId = "..." AND ExecutionStatus = "Running"``."""
    clauses = [f"WorkflowType = {quote_visibility_value(CONNECTION_WORKFLOW_TYPE)}"]
    values = {"status": status, "customer_id": customer_id, "institution": institution, "login_id": login_id}
    for field, key in _LIST_FIELDS.items():
        value = values[field]
        if value is not None:
            clauses.append(f"{key.name} = {quote_visibility_value(value)}")
    # A connection terminated or timed out keeps the running status it last published: it is not waiting.
    if status in RUNNING_CONNECTION_STATUSES:
        clauses.append('ExecutionStatus = "Running"')
    return " AND ".join(clauses)


def service_code_of(details: Sequence[Any]) -> str | None:
    """The first ``serviceCode`` (or ``ServiceCode``) in an ApplicationError's details, or a bare code string."""
    for detail in details:
        if isinstance(detail, str) and _SERVICE_CODE.fullmatch(detail):
            return detail
        if isinstance(detail, dict):
            code = detail.get("serviceCode", detail.get("ServiceCode"))
            if isinstance(code, str) and code:
                return code
    return None


class ConnectionsClient:
    """Connections on one task queue of one namespace: ``await ConnectionsClient.connect()``."""

    def __init__(
        self, client: Client, task_queue: str, *, customer_id: str = DEFAULT_CUSTOMER_ID, priority: PriorityPolicy | None = None, address: str | None = None
    ) -> None:
        self.client = client
        self.task_queue = task_queue
        #: The tenant of the settings (AGGREGATOR_CUSTOMER_ID): what a pipeline's inputs usually name.
        self.customer_id = customer_id
        self.namespace = client.namespace
        self._priority = priority or PriorityPolicy()
        self._address = address
        #: TEMPORAL_API_KEY_FILE's renewal, when ``connect`` opened the client with a token from the file.
        self._token_renewal: ApiKeyFileWatch | None = None

    async def close(self) -> None:
        """Stops the token's renewal from TEMPORAL_API_KEY_FILE, if ``connect`` started one, and closes the
        payload store's S3 client, if one was opened (the Temporal connection needs no closing)."""
        renewal, self._token_renewal = self._token_renewal, None
        if renewal is not None:
            await renewal.stop()
        storage = self.client.data_converter.external_storage
        for driver in storage.drivers if storage is not None else ():
            if isinstance(driver, S3StorageDriver):
                await driver.close()

    @classmethod
    async def connect(
        cls,
        settings: ClientSettings | None = None,
        codec: EncryptionCodec | None | Literal["env"] = "env",
        external_storage: ExternalStorage | None | Literal["env"] = "env",
    ) -> ConnectionsClient:
        """Connects with the settings (default: the environment's, as the TypeScript client reads them), the
        codec (default: the worker's, from the environment; ``None`` for plain payloads) and the payload
        store (default: the worker's PAYLOAD_STORE variables, with the settings' Temporal address deciding
        what ``auto`` means; ``None`` for none). With TEMPORAL_API_KEY_FILE (``settings.api_key_file``) the
        file is read again now, and every ``recheck_ms`` until ``close()``: a changed token is set on the live
        client (``Client.api_key``)."""
        settings = settings or client_settings_from_env()
        api_key = settings.api_key
        if settings.api_key_file is not None:
            # Read again now: the token may have been renewed since the settings were read.
            try:
                api_key = read_api_key_file(settings.api_key_file.path)
            except TemporalApiKeyFileError as error:
                raise TemporalUnavailableError(settings.address, f"cannot connect to Temporal at {settings.address}: {error}") from error
        payload_codec = codec_from_env() if codec == "env" else codec
        if external_storage == "env":
            external_storage = external_storage_from_env({**os.environ, "TEMPORAL_ADDRESS": settings.address})
        tls: bool | temporalio.service.TLSConfig = False
        if settings.tls is not None:
            tls_settings = settings.tls
            pair = tls_settings.client_cert_pair()
            tls = temporalio.service.TLSConfig(
                server_root_ca_cert=tls_settings.server_root_ca_cert(),
                domain=tls_settings.server_name,
                client_cert=pair[0] if pair else None,
                client_private_key=pair[1] if pair else None,
            )
        try:
            client = await Client.connect(
                settings.address,
                namespace=settings.namespace,
                api_key=api_key,
                tls=tls,
                rpc_metadata=dict(settings.rpc_metadata),
                data_converter=data_converter_for(payload_codec, external_storage),
                identity=settings.identity,
            )
        except RuntimeError as error:
            # Which settings a temporal.toml profile gave: the first place to look when they point elsewhere.
            given = "; ".join(f"{setting} from {source}" for setting, source in settings.from_env_config.items())
            raise TemporalUnavailableError(
                settings.address, f"cannot reach Temporal at {settings.address}: {error}" + (f" ({given})" if given else "")
            ) from error
        connections = cls(client, settings.task_queue, customer_id=settings.customer_id, priority=settings.priority, address=settings.address)
        if settings.api_key_file is not None and api_key is not None:
            connections._token_renewal = watch_api_key_file(settings.api_key_file, api_key, [client])
        return connections

    async def start(self, key: str, connection: ConnectionInput | Mapping[str, Any], *, rerun: RerunPolicy = "if-failed", priority: int | None = None) -> str:
        """Starts the connection for a business key, or finds the one already running under that key.
        Returns its workflow id (the key) once Temporal recorded the start."""
        workflow_id, wire, options = self._prepare_start(key, connection, rerun, priority)
        try:
            await self.client.start_workflow(CONNECTION_WORKFLOW_TYPE, wire, id=workflow_id, **options)
        except Exception as error:
            raise self._map_error(workflow_id, error) from error
        return workflow_id

    async def start_and_await_first_step(
        self, key: str, connection: ConnectionInput | Mapping[str, Any], *, rerun: RerunPolicy = "if-failed", priority: int | None = None
    ) -> FirstStep:
        """Starts (or finds) the connection and waits, in the same call (update-with-start), for its first
        step: FirstStepChallenge (``step == "challenge"``, its ``challenge_set``), FirstStepSessionOpen
        (``"session-open"``, ``login_id`` and ``request_id``) or FirstStepEnded (``"ended"``, ``status`` and
        ``failure``). The connection's workflow id is the key, as ``start`` returns it.
        UnexpectedConnectionAnswerError when the step is off the contract."""
        workflow_id, wire, options = self._prepare_start(key, connection, rerun, priority)
        operation: WithStartWorkflowOperation[Any, Any] = WithStartWorkflowOperation(CONNECTION_WORKFLOW_TYPE, wire, id=workflow_id, **options)
        try:
            step: dict[str, Any] = await self.client.execute_update_with_start_workflow(
                AWAIT_FIRST_STEP_UPDATE, start_workflow_operation=operation, result_type=dict
            )
        except Exception as error:
            raise self._map_error(workflow_id, error) from error
        return parse_answer(_FIRST_STEP, step, workflow_id, "first step")

    async def state(self, workflow_id: str) -> ConnectionState:
        """The connection's whole state (status, challenge set, pending operation, polls, last rejection);
        ``.to_wire()`` gives the worker's JSON. UnexpectedConnectionAnswerError when it is off the contract;
        KeyVersionRevokedError, KeyDestroyedError or PayloadNotSealedError when its history cannot be read
        (a worker that cannot read it says only "Encoded failure": the client finds out which)."""
        handle = self._handle(workflow_id)
        try:
            state: dict[str, Any] = await handle.query(CONNECTION_STATE_QUERY, result_type=dict)
        except Exception as error:
            # A worker that cannot read the history answers only "Encoded failure": name why, if that is it.
            unreadable = await unreadable_query_error(self.client, workflow_id, error)
            if unreadable is not None:
                raise unreadable from error
            raise self._map_error(workflow_id, error) from error
        return parse_answer(ConnectionState, state, workflow_id, "state")

    async def answer(
        self, workflow_id: str, responses: Mapping[str, Sequence[str]], *, challenge_set_id: str | None = None, check_locally: bool = True
    ) -> AnswerOutcome:
        """Answers the current challenge set: prompt text (exactly as asked) → answers. Returns the outcome,
        told apart by ``outcome``: AnswerOutcomeAccepted, AnswerOutcomeRejected (by the service; the same
        challenges again as ``next_challenge_set``), AnswerOutcomeRestarted or AnswerOutcomeEnded. A malformed answer raises
        AnswerRejectedError: here when the connection does not await it or a prompt is missing or unknown
        (``source='client'``), else from the workflow's validator (``source='validator'``); nothing reaches
        the service then."""
        answers = {str(prompt): [str(value) for value in values] for prompt, values in responses.items()}
        if check_locally or challenge_set_id is None:
            state = await self.state(workflow_id)
            challenge_set = state.challenge_set
            if state.status != "AwaitingAnswer" or challenge_set is None:
                raise AnswerRejectedError(workflow_id, "client", f"the connection is not awaiting an answer (status {state.status})", challenge_set_id)
            if challenge_set_id is not None and challenge_set_id != challenge_set.id:
                raise AnswerRejectedError(
                    workflow_id,
                    "client",
                    f"challenge set {challenge_set_id} is no longer current (now {challenge_set.id}); look at the new challenges and answer again",
                    challenge_set_id,
                )
            challenge_set_id = challenge_set.id
            if check_locally:
                problems = _answer_problems(challenge_set.challenges, answers)
                if problems:
                    raise AnswerRejectedError(workflow_id, "client", "; ".join(problems), challenge_set_id)
        try:
            outcome: dict[str, Any] = await self._handle(workflow_id).execute_update(
                SUBMIT_ANSWER_UPDATE, {"challengeSetId": challenge_set_id, "responses": answers, "sentAs": SUBMIT_ANSWER_UPDATE}, result_type=dict
            )
        except temporalio.client.WorkflowUpdateFailedError as error:
            cause = error.cause
            raise AnswerRejectedError(workflow_id, "validator", getattr(cause, "message", None) or str(cause or error), challenge_set_id) from error
        except Exception as error:
            raise self._map_error(workflow_id, error) from error
        return parse_answer(_ANSWER_OUTCOME, outcome, workflow_id, "answer outcome")

    async def result(self, workflow_id: str) -> ConnectionResult:
        """Waits for the connection to end: its result (customer_id, login_id, request_id, the products;
        ``.to_wire()`` gives the worker's JSON), or a ConnectionFailedError with the failure type
        (``InvalidCredentials``, ``Cancelled``, ...); UnexpectedConnectionAnswerError when it is off the contract."""
        handle = self._handle(workflow_id)
        try:
            result: dict[str, Any] = await handle.result()
        except Exception as error:
            raise self._map_error(workflow_id, error) from error
        return parse_answer(ConnectionResult, result, workflow_id, "result")

    async def cancel(self, workflow_id: str) -> None:
        """Asks the connection to stop; it ends as Cancelled (``result`` raises ConnectionFailedError type Cancelled)."""
        try:
            await self._handle(workflow_id).cancel()
        except Exception as error:
            raise self._map_error(workflow_id, error) from error

    async def list(
        self, *, status: str | None = None, customer_id: str | None = None, institution: str | None = None, login_id: str | None = None, limit: int = 100
    ) -> list[ConnectionSummary]:
        """Connections matching the filter, newest first, e.g. ``await client.list(status="AwaitingAnswer")``."""
        problems = []
        if status is not None and status not in CONNECTION_STATUSES:
            problems.append(f"status: must be one of {', '.join(CONNECTION_STATUSES)}")
        for name, value in (("customerId", customer_id), ("institution", institution), ("loginId", login_id)):
            if value is not None and not 1 <= len(value) <= 200:
                problems.append(f"{name}: must be 1 to 200 characters")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
            problems.append("limit: must be an integer from 1 to 1000")
        if problems:
            raise InvalidConnectionInputError("list filter: " + "; ".join(problems))
        query = visibility_query(status=status, customer_id=customer_id, institution=institution, login_id=login_id)
        out: list[ConnectionSummary] = []
        try:
            async for execution in self.client.list_workflows(query, limit=limit, page_size=min(limit, 100)):
                out.append(_summarize(execution))
        except Exception as error:
            raise self._map_error(None, error) from error
        return out

    def _handle(self, workflow_id: str) -> WorkflowHandle[Any, Any]:
        return self.client.get_workflow_handle(parse_workflow_id(workflow_id))

    def _prepare_start(
        self, key: str, connection: ConnectionInput | Mapping[str, Any], rerun: str, priority: int | None
    ) -> tuple[str, dict[str, Any], dict[str, Any]]:
        try:
            parsed = connection if isinstance(connection, ConnectionInput) else ConnectionInput.model_validate(connection)
        except pydantic.ValidationError as error:
            raise InvalidConnectionInputError(describe_validation(error)) from error
        wire = parsed.to_wire()
        workflow_id = parse_business_key(key, parsed.customer_id)
        if rerun not in _REUSE_POLICY:
            raise InvalidConnectionInputError(f"rerun must be one of {', '.join(_REUSE_POLICY)}")
        if priority is not None and (isinstance(priority, bool) or not isinstance(priority, int) or not PRIORITY_KEY_MIN <= priority <= PRIORITY_KEY_MAX):
            raise InvalidConnectionInputError(
                f"priority must be an integer from {PRIORITY_KEY_MIN} (first) to {PRIORITY_KEY_MAX} (last), got {json.dumps(priority)}"
            )
        session = parsed.session
        pairs: list[SearchAttributePair[Any]] = [
            SearchAttributePair(CONNECTION_STATUS_KEY, "Authorizing"),
            SearchAttributePair(CUSTOMER_ID_KEY, parsed.customer_id),
        ]
        if session.kind == "live":
            pairs.append(SearchAttributePair(INSTITUTION_KEY, session.institution))
        else:
            pairs.append(SearchAttributePair(LOGIN_ID_KEY, session.login_id))
        # Who waits decides the order; the tenant is the fairness key (src/contract/priority.ts).
        priority_class = "live" if session.kind == "live" else ("scheduled" if parsed.unattended else "pipeline")
        options: dict[str, Any] = {
            "task_queue": self.task_queue,
            "id_conflict_policy": WorkflowIDConflictPolicy.USE_EXISTING,
            "id_reuse_policy": _REUSE_POLICY[rerun],
            "search_attributes": TypedSearchAttributes(pairs),
            "priority": Priority(
                priority_key=priority if priority is not None else self._priority.keys[priority_class],
                fairness_key=parsed.customer_id,
                fairness_weight=self._priority.weight_of(parsed.customer_id),
            ),
        }
        return workflow_id, wire, options

    def _map_error(self, workflow_id: str | None, error: BaseException) -> BaseException:
        if isinstance(error, ConnectionClientError):
            return error
        if isinstance(error, temporalio.client.WorkflowFailureError) and workflow_id is not None:
            return _connection_failed(workflow_id, error)
        if isinstance(error, temporalio.exceptions.WorkflowAlreadyStartedError) and workflow_id is not None:
            return ConnectionAlreadyEndedError(workflow_id)
        if isinstance(error, temporalio.service.RPCError):
            if error.status == temporalio.service.RPCStatusCode.NOT_FOUND and workflow_id is not None:
                return ConnectionNotFoundError(workflow_id)
            if error.status == temporalio.service.RPCStatusCode.ALREADY_EXISTS and workflow_id is not None:
                return ConnectionAlreadyEndedError(workflow_id)
            return TemporalUnavailableError(
                self._address, f"Temporal at {self._address or 'its address'} refused the call ({error.status.name}): {error.message}"
            )
        if isinstance(error, temporalio.client.WorkflowQueryFailedError) and workflow_id is not None and "not found" in str(error).lower():
            return ConnectionNotFoundError(workflow_id)
        return error


def _connection_failed(workflow_id: str, error: temporalio.client.WorkflowFailureError) -> ConnectionFailedError:
    """Maps a workflow failure to ConnectionFailedError, reading the type and the service code."""
    cause = error.cause
    end_type = "Unknown"
    service_code = None
    if isinstance(cause, temporalio.exceptions.ApplicationError):
        end_type = cause.type if cause.type in CONNECTION_FAILURE_TYPES else "Unknown"
        service_code = service_code_of(cause.details)
    elif isinstance(cause, temporalio.exceptions.CancelledError):
        end_type = "Cancelled"
    elif isinstance(cause, temporalio.exceptions.TerminatedError):
        end_type = "Terminated"
    elif isinstance(cause, temporalio.exceptions.TimeoutError):
        end_type = "TimedOut"
    reason = cause.message if isinstance(cause, temporalio.exceptions.FailureError) else str(error)
    return ConnectionFailedError(workflow_id, end_type, reason, service_code)


def _answer_problems(challenges: Sequence[SecurityChallenge], responses: Mapping[str, Sequence[str]]) -> list[str]:
    """What is missing or unknown in an answer (src/workflows/connection/challenges.ts's first checks); each
    challenge type's own rules are the workflow validator's. Every challenge is answered under its
    exact prompt but TextOrCall (under the chosen option), a type the spec does not name included:
    that one takes one free-text value (its iterables, if any, are for reference only)."""
    if not responses:
        return ["no answer given: every prompt must be answered at once"]
    problems = []
    expected: set[str] = set()
    for challenge in challenges:
        # A TextOrCall challenge is answered under the chosen option, not its prompt.
        if challenge.type == "TextOrCall":
            expected.update(challenge.iterables or [])
        else:
            expected.add(challenge.prompt)
    for prompt in responses:
        if prompt not in expected:
            problems.append(f'"{prompt[:80]}" was not asked (keys must be the exact prompt text)')
    for challenge in challenges:
        prompt = challenge.prompt
        if challenge.type != "TextOrCall" and prompt not in responses:
            problems.append(f'"{prompt[:80]}": is not answered (all prompts must be answered in one call)')
    return problems


def _summarize(execution: WorkflowExecution) -> ConnectionSummary:
    attributes = execution.typed_search_attributes
    status = attributes.get(CONNECTION_STATUS_KEY)
    return ConnectionSummary(
        workflow_id=execution.id,
        run_id=execution.run_id,
        status=status if status in CONNECTION_STATUSES else None,
        execution_status=execution.status.name if execution.status is not None else None,
        customer_id=attributes.get(CUSTOMER_ID_KEY),
        institution=attributes.get(INSTITUTION_KEY),
        login_id=attributes.get(LOGIN_ID_KEY),
        started_at=execution.start_time,
        closed_at=execution.close_time,
    )
