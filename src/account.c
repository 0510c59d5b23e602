#include "pixrelay/account.h"
