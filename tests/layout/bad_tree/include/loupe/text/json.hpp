// fake: fine
#pragma once
#include <string>
