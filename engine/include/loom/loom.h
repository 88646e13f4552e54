/* Umbrella header: the public API of libloom. */
#pragma once

#include "export.h"
#include "version.h"
#include "error.h"
#include "file.h"
#include "context.h"
#include "npy.h"
#include "pool.h"
#include "shape.h"
