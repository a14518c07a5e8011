#!/usr/bin/env node
// The `flows` command, built into dist/ when the repository is installed (scripts/build-clients.mjs).
require("../dist/main.js");
