// Types for failure-excerpt.mjs, which the test runner loads before any TypeScript loader is present.
export declare const FAILURE_HEAD_LINES: number;
export declare const FAILURE_TAIL_LINES: number;
/** The error's text cut to its head and tail, with how many lines were left out between them. */
export declare function failureExcerpt(text: unknown): string;
