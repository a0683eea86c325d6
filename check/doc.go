// Package check derives what a log shows from its events alone: the
// checker (overlaps, lost updates from the operations' histories,
// deadlocks, duplicates), the derived events a log carries checked again
// (Rederiver), the Tally every view folds, and the Summary with its
// verdict. It reads and writes log files (ReadRecording, Writer), bounding
// and cleaning them as the untrusted input they are, and says when a log
// is not a whole record of a run (IntegrityError). Its one picture is the
// results box (Summary.Box), plain text.
package check
