// The client side of `hloidx lsp`: start the server over stdio for HLO and StableHLO files and
// pass it the `hloidx.*` settings. Everything else is the server's.
"use strict";

const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function settings() {
  const config = vscode.workspace.getConfiguration("hloidx");
  return { device: config.get("device"), inlayHints: config.get("inlayHints") };
}

async function activate(context) {
  const [command, ...args] = vscode.workspace.getConfiguration("hloidx").get("command");
  client = new LanguageClient(
    "hloidx",
    "hloidx",
    { command, args },
    {
      documentSelector: [
        { language: "hlo" },
        { language: "stablehlo" },
      ],
      initializationOptions: { hloidx: settings() },
      synchronize: { configurationSection: "hloidx" },
    }
  );
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("hloidx") && client) {
        client.sendNotification("workspace/didChangeConfiguration", {
          settings: { hloidx: settings() },
        });
      }
    })
  );
  await client.start();
}

async function deactivate() {
  if (client) {
    await client.stop();
  }
}

module.exports = { activate, deactivate };
