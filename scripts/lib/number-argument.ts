/** A number given on a harness's command line, checked against its range, or a message naming the flag. */
export function numberArgument(
  flag: string,
  text: string | undefined,
  min: number,
  max: number,
  { integer = true }: { integer?: boolean } = {},
): number | string {
  const value = Number(text);
  const pattern = integer ? /^\d+$/ : /^\d+(\.\d+)?$/;
  if (text === undefined || !pattern.test(text) || value < min || value > max) {
    return `${flag} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}, got ${JSON.stringify(text ?? '')}`;
  }
  return value;
}
