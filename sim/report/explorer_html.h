// The HTML explorer: one self-contained page (inline CSS, JavaScript and data; nothing
// loaded from the network) to browse simulated plans.
//
// `data` is an object with `title`, `subtitle`, `budget_gib`, `categories` (memory
// category names) and `rows`: per plan tp, pp, dp, cp, zero, mb, schedule, v, recompute,
// sp, status, simulated, step, mfu, bubble, tokens_per_s, memory, breakdown (GiB per
// category), budget, message (see sweep/analysis.h ExplorerData); optionally `mesh_dims`,
// [key, label] pairs of a JAX-style sweep's mesh-size and rule columns, each row holding
// its value under the key: they become controls too, and the plan line and the table of
// fastest plans show them ("JAX mesh").
//
// The page has a control per plan dimension, a per-GPU memory bar split by category
// against the budget line, and the step time, MFU and bubble of the selected plan; a
// scatter of step time against memory; and the fastest plans. The URL hash selects a
// plan (#tp=8&pp=4&dp=2&zero=1&mb=1) exactly as the controls do, and the page writes the
// selection back into the hash. Text from the data (names, messages) is inserted as
// text, never as markup, and the embedded JSON escapes '<', '>' and '&', so a name like
// "</script>" cannot end the script element.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

namespace meshsim {

void WriteExplorerHtml(const nlohmann::ordered_json& data, std::ostream& out);

// `text` with &, <, >, " and ' replaced by character references.
std::string HtmlEscape(const std::string& text);
// JSON text safe inside a <script> element: <, > and & (and U+2028/9) as \u escapes.
std::string ScriptSafeJson(const nlohmann::ordered_json& data);

}  // namespace meshsim
