/**
 * The language-model provider API of newer VS Code (stable since 1.104; not in the 1.99 typings this extension
 * builds against, which stay at its minimum engine): the few shapes the participant's model needs, and the check
 * that the running VS Code has them. Where it has not, nothing of VS Code's Chat view is used (docs/chat-view.md).
 */
import * as vscode from 'vscode';

export interface LanguageModelChatInformation {
  readonly id: string;
  readonly name: string;
  readonly family: string;
  readonly version: string;
  readonly tooltip?: string;
  readonly detail?: string;
  readonly maxInputTokens: number;
  readonly maxOutputTokens: number;
  readonly capabilities: { readonly imageInput?: boolean; readonly toolCalling?: boolean | number };
}

export interface LanguageModelChatProvider {
  readonly onDidChangeLanguageModelChatInformation?: vscode.Event<void>;
  provideLanguageModelChatInformation(options: { readonly silent: boolean }, token: vscode.CancellationToken): vscode.ProviderResult<LanguageModelChatInformation[]>;
  provideLanguageModelChatResponse(
    model: LanguageModelChatInformation,
    messages: readonly unknown[],
    options: unknown,
    progress: vscode.Progress<vscode.LanguageModelTextPart>,
    token: vscode.CancellationToken,
  ): Thenable<void>;
  provideTokenCount(model: LanguageModelChatInformation, text: unknown, token: vscode.CancellationToken): Thenable<number>;
}

type LmWithProviders = typeof vscode.lm & {
  registerLanguageModelChatProvider?: (vendor: string, provider: LanguageModelChatProvider) => vscode.Disposable;
};

/** VS Code's registration of a language-model provider, when the running VS Code has it (1.104 and later). */
export function languageModelProviderApi(): ((vendor: string, provider: LanguageModelChatProvider) => vscode.Disposable) | undefined {
  const lm = (vscode as { lm?: LmWithProviders }).lm;
  const register = lm?.registerLanguageModelChatProvider;
  const chat = (vscode as { chat?: typeof vscode.chat }).chat;
  if (typeof register !== 'function' || typeof chat?.createChatParticipant !== 'function') return undefined;
  return register.bind(lm);
}
