// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#include <stdio.h>
#include "xdpwake.h"
int main(void) { printf("%s\n", xw_version()); return 0; }
