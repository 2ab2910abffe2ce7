/** The browser and the workbench settings every test workbench starts with (test/vscode/runner.ts). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
  // Debian's Chromium 150 aborts the browser (font_data_service_impl.cc "Check failed … No such file") when a
  // renderer asks its font service for a fallback font; renderers reading fonts themselves works.
  '--disable-features=FontDataServiceLinux',
];

/** Settings that keep the workbench quiet and offline; the caller's userSettings win. */
export const QUIET_SETTINGS: Record<string, unknown> = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'chat.disableAIFeatures': true,
  'security.workspace.trust.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'git.enabled': false,
  'git.openRepositoryInParentFolders': 'never',
  'remote.autoForwardPorts': false,
  'typescript.disableAutomaticTypeAcquisition': true,
  'npm.autoDetect': 'off',
  // Tests open the chat when they need it (the walkthrough test checks the first start's own opening).
  'agentHost.chat.openOnFirstStart': false,
};
