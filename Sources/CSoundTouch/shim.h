// SoundTouch's C interface (LGPL-2.1, linked dynamically): time-stretch and pitch-shift.
#include <SoundTouchDLL.h>
