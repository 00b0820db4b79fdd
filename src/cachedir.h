// SPDX-License-Identifier: MIT
// The directory climg keeps what it learns between runs in: the programs' device binaries
// (src/ocl/cache.c) and the measurements behind the automatic choice of path
// (src/cost_profile.c). $CLIMG_CACHE_DIR, else $XDG_CACHE_HOME/climg (an absolute
// XDG_CACHE_HOME only, as the XDG base directory spec asks), else $HOME/.cache/climg.
#ifndef CLIMG_CACHEDIR_H
#define CLIMG_CACHEDIR_H

// The directory, created with its missing parents (mode 0700) where needed, as a newly
// allocated string; NULL where there is none to use: no variable names one, it cannot be
// created, or it is not a directory owned by this user and closed to group and others
// (whoever can write it could make climg load their device code or mislead its choices).
char *cachedir_get(void);

// The same, but NULL where the directory does not exist: nothing is created.
char *cachedir_find(void);

// From now on cachedir_get creates nothing either (for a process that must not bring back a
// directory removed while it runs).
void cachedir_no_create(void);

#endif
