package store

import "github.com/locklab/locklab/store/spawn"

// Spawned is one server of a spawned topology as the run shows it.
type Spawned = spawn.Server

// Spawned lists the servers of the run's topology (none without one).
func (s *Store) Spawned() []Spawned {
	if s.topo == nil {
		return nil
	}
	return s.topo.Servers()
}

// Topology is the name of the run's spawned topology ("" when none).
func (s *Store) Topology() string {
	if s.topo == nil {
		return ""
	}
	return s.topo.Name()
}
