// json_blocker: gamecore JSON -> blocks -> frame diff. Include this one header.
#pragma once

#include "kvframe/json_blocker/diff.h"
#include "kvframe/json_blocker/error.h"
#include "kvframe/json_blocker/frame_stream.h"
#include "kvframe/json_blocker/partition.h"
#include "kvframe/json_blocker/patch.h"
#include "kvframe/json_blocker/rules.h"
