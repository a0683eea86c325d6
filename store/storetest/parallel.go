package storetest

import (
	"flag"
	"strconv"
)

// WidenParallel lets n of a package's parallel tests run at once unless
// -test.parallel was given: for a TestMain whose tests mostly wait (on
// servers, TTLs, a virtual clock), where more than the cores fit. It parses
// the command line, so call it before m.Run.
func WidenParallel(n int) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}
