// Package event is the event model of a locklab run: what happened (Kind,
// Event), the in-memory Log a run appends to and every view reads, the
// log's header with the run's parameters and their one table, and the
// JSON form of an event (AppendJSON, the fast Decoder, Wire). It knows
// nothing of scenarios, checkers or terminals.
package event
