/**
 * First steps: the walkthrough "Get started with Agent Host" (package.json `contributes.walkthroughs`).
 * Plain Node loads this (the manifest test holds the id against package.json).
 */

/** The walkthrough's id in package.json; VS Code knows it as `<publisher>.<name>#getStarted`. */
export const WALKTHROUGH_ID = 'getStarted';
