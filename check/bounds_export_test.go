package check

// SetMaxLogEventsForTest lowers the event limit of a log read from a file
// until the returned function restores it.
func SetMaxLogEventsForTest(n int) (restore func()) {
	old := maxLogEvents
	maxLogEvents = n
	return func() { maxLogEvents = old }
}
