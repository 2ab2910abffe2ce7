/**
 * From an agent's answer to the edit a selection command proposes, as the editor's commands make it: the code
 * block that answers, fitted to the selection; a doc comment spliced into the unchanged function; a test file.
 * Each throws an Error saying why when the answer holds nothing to propose. No vscode.
 */
import { fitReplacement, pickCodeBlock } from './codeBlocks';
import { bodyUnchanged, extractDocComment, spliceDocComment } from './docstring';

/** fix and optimize: the replacement of `original` (equal to it when the agent proposes no change). */
export function rewriteProposal(original: string, answer: string, languageId: string): string {
  const block = pickCodeBlock(answer, languageId);
  if (!block) throw new Error('the answer holds no code block');
  return fitReplacement(original, block.code);
}

/** docstring: `original` with the answer's doc comment; refused when anything but the documentation would change. */
export function docstringProposal(original: string, answer: string, languageId: string): string {
  const block = pickCodeBlock(answer, languageId);
  const doc = extractDocComment(block?.code ?? answer, languageId);
  if (!doc) throw new Error('the answer holds no documentation comment');
  const proposed = spliceDocComment(original, doc, languageId);
  if (!bodyUnchanged(original, proposed, languageId)) throw new Error('the proposal would change the code, not only its documentation; refused');
  return proposed;
}

/** tests: the whole content of the test file, ending with a newline. */
export function testFileProposal(answer: string, languageId: string): string {
  const block = pickCodeBlock(answer, languageId);
  if (!block) throw new Error('the answer holds no code block');
  return block.code.endsWith('\n') ? block.code : `${block.code}\n`;
}
