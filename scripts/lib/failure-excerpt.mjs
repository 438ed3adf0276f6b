// How much of a failed test's error the runner keeps: its first lines (what failed) and its last ones
// (where a harness's output ends with its summary), each line cut to 300 characters. One place for
// both the file reporter (which writes the excerpt) and the runner's closing summary (which repeats it).

export const FAILURE_HEAD_LINES = 12;
export const FAILURE_TAIL_LINES = 12;
const LINE_CHARACTERS = 300;

/** The error's text cut to its head and tail, with how many lines were left out between them. */
export function failureExcerpt(text) {
  const lines = String(text)
    .split('\n')
    .map((line) => line.slice(0, LINE_CHARACTERS));
  if (lines.length <= FAILURE_HEAD_LINES + FAILURE_TAIL_LINES + 1) return lines.join('\n');
  const omitted = lines.length - FAILURE_HEAD_LINES - FAILURE_TAIL_LINES;
  return [
    ...lines.slice(0, FAILURE_HEAD_LINES),
    `… ${omitted} line(s) left out (the file's output above has them all) …`,
    ...lines.slice(-FAILURE_TAIL_LINES),
  ].join('\n');
}
