/**
 * `npm run security:check` at a small size, as a subprocess: a real OpenBao with a least-privilege
 * token, the dev server, the sandbox and a vault-transit worker process; every attack tried must be
 * refused and every attacked connection must still complete. Its judges are checked here too, without
 * a server: a secret that is there is found.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { forgedGrantVerdict, type HistoryEvents } from '../../scripts/security-check/admission-attacks.js';
import { secretsAbsent } from '../../scripts/security-check/attacks.js';
import { clearTextHits, failuresOfType, unsealedDetails, UNUSABLE_REPLY_MARKER_LIST } from '../../scripts/security-check/unusable-reply-attacks.js';
import { ENCRYPTED_ENCODING_BYTES } from '../../src/codec/payload-format.js';
import { admissionGrantSignal } from '../../src/contract/admission/admission-definitions.js';
import { msToTs } from '../../src/sdk/internals.js';
import { parseSecurityCheckArgs, SecurityCheckArgumentError } from '../../scripts/security-check/options.js';
import { failureReport, runHarness } from '../helpers/harness-run.js';

const ENTRY = 'scripts/security-check/security-check.ts';
// A hang guard, not a timing target: alone the run takes about 3.5 min, beside the rest of the suite
// on two cores it took 4.3 min in CI, so the guard sits well above both.
const RUN_TIMEOUT_MS = 480_000;
const SUMMARY =
  /^security-check: (\d+) attacks tried, (\d+) refused as expected, (\d+) got through, tenants isolated (\S+), forgotten tenant unreadable (\S+), others unaffected (yes|no)$/;

void describe('security-check judges', () => {
  void it('finds a secret where it is, names where, and passes only a search that found none', () => {
    const secrets = [{ label: 'the token', value: 's.abc123' }];
    const found = secretsAbsent(
      'in logs',
      [
        { where: 'worker.log', bytes: Buffer.from('{"msg":"token s.abc123"}') },
        { where: 'other.log', bytes: Buffer.from('clean') },
      ],
      secrets,
    );
    assert.equal(found.refused, false);
    assert.equal(found.detail, 'the token in worker.log');
    assert.equal(secretsAbsent('in logs', [{ where: 'other.log', bytes: Buffer.from('clean') }], secrets).refused, true);
  });

  void it('tells who admitted a queued connection sent an unsealed grant, from its history, and calls what it cannot tell through', () => {
    const at = (ms: number) => msToTs(ms);
    const grant = (ms: number, fromAdmission: boolean) => ({
      eventTime: at(ms),
      workflowExecutionSignaledEventAttributes: {
        signalName: admissionGrantSignal.name,
        ...(fromAdmission ? { externalWorkflowExecution: { workflowId: 'admission-c:unattended' } } : {}),
      },
    });
    const task = (ms: number) => ({ eventTime: at(ms), workflowTaskStartedEventAttributes: {} });
    const iso = (ms: number) => new Date(ms).toISOString();
    // The forged grant at 1000 (its task at 1010), the admission's own at 5000 (its task at 5010).
    const history = [grant(1_000, false), task(1_010), grant(5_000, true), task(5_010)] as HistoryEvents;
    assert.equal(forgedGrantVerdict(history, undefined).refused, true, 'still queued');
    assert.equal(forgedGrantVerdict(history, iso(5_010)).refused, true, "admitted in the admission's own grant's task");
    assert.equal(forgedGrantVerdict(history, iso(1_010)).refused, false, "admitted in the forged grant's task, before the admission's own");
    assert.equal(
      forgedGrantVerdict([grant(1_000, false), task(1_010)] as HistoryEvents, iso(1_010)).refused,
      false,
      'admitted with no grant but the forged one',
    );
    // Both in one task: undecided, counted as through.
    const together = forgedGrantVerdict([grant(1_000, false), grant(1_001, true), task(1_010)] as HistoryEvents, iso(1_010));
    assert.equal(together.refused, false);
    assert.match(together.detail, /undecided/);
    // The admission's own grant handled before the forged one arrived: not the attacker's doing.
    assert.equal(forgedGrantVerdict([grant(900, true), task(905), grant(1_000, false), task(1_010)] as HistoryEvents, iso(905)).refused, true);
  });

  void it("finds an unusable reply's values in clear wherever an event holds them, and tells sealed failure details from unsealed ones", () => {
    const [name, email] = UNUSABLE_REPLY_MARKER_LIST;
    assert.ok(name && email);
    const text = (value: string) => new TextEncoder().encode(value);
    const failure = (
      details: Uint8Array,
      encoding: Uint8Array,
      message = 'GetAccountsDetail answered HTTP 200 with a body the product cannot act on: RequestId is required',
    ) => ({
      message,
      stackTrace: '',
      applicationFailureInfo: { type: 'UnexpectedResponse', details: { payloads: [{ metadata: { encoding }, data: details }] } },
    });
    const sealed = failure(new Uint8Array([1, 2, 3]), ENCRYPTED_ENCODING_BYTES);
    const plain = failure(text(JSON.stringify({ replyExcerpt: `{"Holder":{"Name":"${name.value}"}}` })), text('json/plain'));
    const history = [
      {
        eventId: 1,
        workflowExecutionStartedEventAttributes: {
          memo: { fields: { state: { metadata: { encoding: text('json/plain') }, data: text(`"${email.value}"`) } } },
        },
      },
      {
        eventId: 7,
        activityTaskFailedEventAttributes: {
          failure: {
            ...sealed,
            stackTrace: `Error: ${name.value}
    at read`,
          },
        },
      },
      { eventId: 9, workflowExecutionFailedEventAttributes: { failure: { message: 'Encoded failure', cause: plain } } },
    ] as unknown as HistoryEvents;
    const hits = clearTextHits(history, UNUSABLE_REPLY_MARKER_LIST);
    assert.deepEqual(hits, [
      `${email.label} in event 1 (workflowExecutionStarted) workflowExecutionStartedEventAttributes.memo.fields.state.data`,
      `${name.label} in event 7 (activityTaskFailed) activityTaskFailedEventAttributes.failure.stackTrace`,
      `${name.label} in event 9 (workflowExecutionFailed) workflowExecutionFailedEventAttributes.failure.cause.applicationFailureInfo.details.payloads[0].data`,
    ]);
    const failures = failuresOfType(history, 'UnexpectedResponse');
    assert.equal(failures.length, 2, "the activity's failure and the cause of the workflow's");
    assert.deepEqual(unsealedDetails(failures), [
      'event 9 (workflowExecutionFailed).workflowExecutionFailedEventAttributes.failure.cause: details encoded json/plain',
    ]);
    assert.deepEqual(
      clearTextHits([{ eventId: 2, activityTaskFailedEventAttributes: { failure: sealed } }] as unknown as HistoryEvents, UNUSABLE_REPLY_MARKER_LIST),
      [],
    );
    assert.deepEqual(unsealedDetails([{ where: 'w', failure: { applicationFailureInfo: { type: 'UnexpectedResponse' } } }]), ['w: no details']);
  });

  void it('reads its command line, naming a bad argument', () => {
    assert.deepEqual(parseSecurityCheckArgs([]), { rounds: 3, keepLogs: false });
    assert.deepEqual(parseSecurityCheckArgs(['--rounds', '1', '--keep-logs']), { rounds: 1, keepLogs: true });
    assert.equal(parseSecurityCheckArgs(['--help']), undefined);
    assert.throws(() => parseSecurityCheckArgs(['--rounds', '0']), /--rounds must be an integer from 1 to 50, got "0"/);
    assert.throws(() => parseSecurityCheckArgs(['--tenants']), SecurityCheckArgumentError);
  });
});

void describe('npm run security:check', () => {
  void it('refuses a bad argument with exit code 2, naming it', async () => {
    const { code, output } = await runHarness(ENTRY, ['--rounds', 'many'], 60_000);
    assert.equal(code, 2, failureReport(output));
    assert.match(output, /--rounds must be an integer from 1 to 50, got "many"/);
  });

  void it(
    'refuses every attack tried on the production-style stack, and the attacked connections still complete',
    { timeout: RUN_TIMEOUT_MS + 20_000 },
    async () => {
      const { code, signal, stdout, output } = await runHarness(ENTRY, ['--rounds', '1'], RUN_TIMEOUT_MS);
      const report = `\n${failureReport(output)}`;
      const last = stdout.trimEnd().split('\n').at(-1) ?? '';
      const match = SUMMARY.exec(last);
      assert.ok(match, `the last line is not the summary (exit ${code ?? signal})${report}`);
      const [tried, refused, through] = match.slice(1, 4).map(Number) as [number, number, number];
      assert.equal(through, 0, `attacks got through${report}`);
      assert.equal(refused, tried, report);
      // The unsealed signal, update and start; two KMS addresses in clear; argv, logs and history searched; the outage seal cap; a payload forged through the codec endpoint; the codec token on the console; each tenant's reader on the other's history, and through a codec endpoint; a reader of one static key file; another tenant's sealed signal; a connection input naming another tenant's book refresh; operators by identity (another tenant's operator, a viewer answering, forged session, disabled identity, shared token in production); the audit trail (the other tenant's probes recorded, an answer it cannot record); a disabled identity answering through the CLI; bearer tokens on the console's API; another tenant's operator through the CLI's commands; another tenant's connection counts; a lender's Nexus caller on another tenant's connections (its endpoint naming the other tenant, an endpoint mapped to no tenant); the pipeline entry (tenant A's key on B's connection, on a start naming B; a result claimed with another event's token, and twice; a callback out of the tenant's list, through the entry and past it); a tenant's admission (an unsealed grant to a queued connection; an unsealed request and one naming another tenant's connection; a flood of requests for runs that do not exist; an unsealed grant by signal-with-start to a held start; held starts forged in visibility); a book entry forged with another tenant's key; a connection row forged so, against the tenant's listing; an unusable reply's body (an applicant's data) searched for in clear in its connection's history; a sealed answer copied into another connection of the tenant; the applicant's credentials through the codec endpoint; a signed-out operator's copied cookie, with the trail of it.
      assert.equal(tried, 45, report);
      for (const attack of [
        "tenant A's pipeline key on tenant B's connection",
        "tenant A's pipeline key starting a connection naming tenant B",
        "a result claim with another event's token",
        'a second claim of a result',
        "a callback out of the tenant's list",
        "a lender's Nexus caller on another tenant's connections",
        "tenant A's operator on tenant B's work",
        "tenant A's operator asking tenant B's connection counts",
        "bearer tokens on the console's API: another tenant's connection, another application's token, a made-up one",
        "tenant A's operator on tenant B's work, through every CLI command",
        "tenant A's operator probing tenant B, left out of the audit trail",
        'an answer sent while the audit trail cannot be written',
        'a disabled identity answering through the CLI with its kept credentials',
        'a viewer answering a challenge',
        'a forged and a changed session cookie',
        'a disabled identity using its session',
        "a signed-out operator's session in a copied cookie",
        "a sealed answer copied from one connection's history into another of the same tenant",
        "the applicant's password and answers read through the codec endpoint",
        'the shared console token on a production console',
        "another tenant's sealed signal",
        "a connection input naming another tenant's book refresh",
        'static keys per tenant',
        'unsealed signal',
        'unsealed update',
        'unsealed start input',
        'a payload forged through the codec endpoint',
        'the codec token used on the console',
        'KMS over http:// to another host (Vault/OpenBao)',
        'KMS over http:// to another host (AWS KMS)',
        'secrets in the argv',
        'secrets in the run’s logs',
        'secrets in the histories',
        'sealing without end through a KMS outage',
        'unsealed admission grant to a queued unattended connection',
        "admission requests without the key and naming another tenant's connection",
        'a flood of sealed admission requests for runs that do not exist',
        'unsealed grant by signal-with-start to a held unattended start',
        "forged held starts in visibility (an unsealed memo, another tenant's sealed memo) and an unsealed wake",
        "a book entry forged in visibility, its record sealed with another tenant's key",
        "a connection row forged in visibility, its memo sealed with another tenant's key, against the tenant's listing",
        "an unusable reply's body in clear in history",
      ]) {
        assert.match(stdout, new RegExp(`refused {4}${attack.replace(/[()/]/g, '\\$&')}`), `${attack}${report}`);
      }
      assert.equal(
        (stdout.match(/refused {4}tenant \S+'s reader on \S+'s (history, read directly|payloads through a console's codec endpoint)/g) ?? []).length,
        3,
        `the readers across tenants${report}`,
      );
      assert.equal(match[4], '3/3', `each tenant's reader (two on OpenBao, one of a static key file) kept to its own tenant${report}`);
      assert.equal(match[5], 'yes', `the forgotten tenant's payloads fail KeyDestroyedError${report}`);
      assert.equal(match[6], 'yes', `every attacked connection completed with the sealed answer, and the other tenant reads on${report}`);
      assert.doesNotMatch(stdout, /the history search is blind/, report);
      assert.equal(code, 0, `exit code${report}`);
    },
  );
});
