// The LoRA adapters a server offers its sessions (kvframe-serve --adapter
// NAME=FILE, --lora): each loaded once for the engine's model, sessions
// naming one in OpenSession.adapter (EngineBackend), one of them, or a file
// of its own, the default for sessions that name none.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kvframe/runtime_engine/session.h"
#include "kvframe/server_core/backend.h"

namespace kvframe::server {

using NamedAdapters = std::map<std::string, std::shared_ptr<runtime::LoraAdapter>>;

// Adapter files by name: with the default model kvframe's shipped ones
// (runtime::shipped_adapters: "block", "holdem", ...), then each NAME=FILE of
// `specs` (a name given twice: the last). BadRequest for a spec without '=',
// an empty file, or a name other than letters, digits, '_', '-' and '.', or
// "none" or "default" (those mean the base model and the server's default).
BackendResult<std::map<std::string, std::string>> adapter_files(const std::vector<std::string>& specs,
                                                                const std::string& model_path);

// Loads every file for the engine's model and makes `default_file` (empty:
// none) the engine's default adapter — the very object of a named adapter
// with that file, so it is listed under that name. Engine (naming the file
// and why) for a file that is not an adapter for this model.
BackendResult<NamedAdapters> load_adapters(runtime::Engine& engine, const std::map<std::string, std::string>& files,
                                           const std::string& default_file);

// "block, holdem" (or "none").
std::string adapter_names(const NamedAdapters& adapters);

}  // namespace kvframe::server
