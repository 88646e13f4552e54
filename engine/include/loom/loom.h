/* Umbrella header: the public API of libloom. */
#pragma once

#include "export.h"
#include "version.h"
#include "error.h"
#include "file.h"
