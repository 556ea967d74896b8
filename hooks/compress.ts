import { countTokens } from "../shared/tokens.js";
import { compressLines, PASSTHROUGH_TOKENS, type CompressOptions, type CompressResult } from "./compress-lines.js";

export { compressFast, compressLines, PASSTHROUGH_TOKENS, type CompressOptions, type CompressResult, type OutputKind } from "./compress-lines.js";

/** Compresses bulky command output, keeping errors, failing tests and summaries; never longer than the input. */
export function compressOutput(text: string, opts: CompressOptions = {}): CompressResult {
  const original_tokens = countTokens(text);
  const untouched: CompressResult = { text, original_tokens, tokens: original_tokens, dropped_lines: 0, kept: "all" };
  if (original_tokens < PASSTHROUGH_TOKENS) return untouched;
  const fast = compressLines(text, opts);
  if (fast.kept === "all") return untouched;
  const tokens = countTokens(fast.text);
  if (tokens >= original_tokens || fast.text.length >= text.length) return untouched;
  return { text: fast.text, original_tokens, tokens, dropped_lines: fast.dropped_lines, kept: "compressed" };
}
