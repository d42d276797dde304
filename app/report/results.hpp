// Statistics over iterations and the three output formats of a run: JSON (the
// stable, documented result), CSV (one row per point and metric) and the human
// table (one cell per point holding min/max/avg/median). The include callers
// use; each job has its own header:
#pragma once

#include "app/experiment/params_json.hpp" // params_json, for the callers that write results

#include "app/report/manifest.hpp"    // Manifest, make_manifest, version_text, format_utc
#include "app/report/result_json.hpp" // to_json
#include "app/report/stats.hpp"       // Stats, summarize, metric_names
#include "app/report/tables.hpp"      // to_csv, to_table, to_grouped_table, table_notes
#include "app/report/text.hpp"        // render_columns, point_name, split_commas, metric_unit
