/**
 * The CLI's only way to its terminal: every string it prints, its own or an agent's, passes visibleControls
 * here, so no agent text can send an escape sequence or overwrite a line (scripts/check-layers.mjs holds
 * src/cli to it). The CLI prints no colour of its own; one would be written after this filter, never through an agent's text.
 */
import { visibleControls } from '../core/visibleText';

export const stdout = (text: string): void => void process.stdout.write(visibleControls(text));
export const stderr = (text: string): void => void process.stderr.write(visibleControls(text));
