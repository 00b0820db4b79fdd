// SPDX-License-Identifier: MIT
// The cost model (cost.h) as this machine measured it in earlier runs, kept in the cache
// directory (cachedir.h) with the date it was saved; cost_profile.c gives the format and
// when a kept model is not used.
#ifndef CLIMG_COST_PROFILE_H
#define CLIMG_COST_PROFILE_H

#include "cost.h"

// A kept model older than this is measured anew.
#define COST_PROFILE_MAX_DAYS 30

// The kept model, or the built-in one (cost_init) where there is none to use.
void cost_profile_load(struct cost_model *m);

// Keeps m where it learned something since it was loaded or saved; where it learned nothing
// of the device, the device's part kept now stays (another run may have learned it since).
// Best effort: a failure leaves the kept model as it was and is not reported.
void cost_profile_save(struct cost_model *m);

#endif
