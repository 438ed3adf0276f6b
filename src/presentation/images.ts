/**
 * How a challenge's images are read, the same in the CLI (which writes them to files) and the
 * console's page (which shows them): the service may give an image as bare base64 or as a data:
 * URL, and the page shows only what is plain base64, never markup. Browser-safe (the page imports it
 * as /shared/images.js).
 */

/** The image's base64, a `data:image/...;base64,` prefix removed. */
export function imageBase64(image: string): string {
  return image.replace(/^data:image\/[a-z+]+;base64,/i, '');
}

/** Whether `text` is nothing but base64 (so it can go into an img's data: URL). */
export function isPlainBase64(text: string): boolean {
  return /^[A-Za-z0-9+/]+={0,2}$/.test(text);
}
