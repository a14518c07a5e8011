#!/bin/sh
# What the image's node_modules hold and the server never loads (run in the image's build, after
# `npm prune --omit=dev`): Prisma's client runtimes for other databases, engines and platforms (the
# generated clients load only `runtime/client.js` and the SQLite and PostgreSQL query compilers, as
# CommonJS), source maps and type declarations everywhere (the server runs compiled JavaScript without
# --enable-source-maps), and better-sqlite3's C sources and compiler output beside its built module.
# The container checks in CI start the image on SQLite and compose on PostgreSQL after it.
set -eu
cd "${1:-.}/node_modules"
runtime=@prisma/client/runtime
rm -f "$runtime"/*.map "$runtime"/*.mjs "$runtime"/query_engine_bg.* \
  "$runtime"/query_compiler_bg.mysql.* "$runtime"/query_compiler_bg.sqlserver.* "$runtime"/query_compiler_bg.cockroachdb.* \
  "$runtime"/react-native.* "$runtime"/edge.* "$runtime"/edge-esm.* "$runtime"/wasm-engine-edge.* "$runtime"/wasm-compiler-edge.*
rm -rf better-sqlite3/deps better-sqlite3/src better-sqlite3/build/Release/obj better-sqlite3/build/Release/obj.target \
  better-sqlite3/build/Release/.deps better-sqlite3/build/deps better-sqlite3/build/Release/test_extension.node
find . -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \) -delete
