// Package all registers every lock strategy that lives beyond package lock
// (the ones that bring a client library: Postgres, MariaDB, memcached,
// etcd; and the Redis lock libraries people use, bsm/redislock,
// go-redsync and rueidis's rueidislock, unmodified). This is the one place
// they are registered: a program that offers
// them imports it, and a program that needs only package lock does not pay
// for their clients.
package all

import (
	"github.com/locklab/locklab/lock/etcd"
	"github.com/locklab/locklab/lock/libs"
	"github.com/locklab/locklab/lock/memcached"
	"github.com/locklab/locklab/lock/mysql"
	"github.com/locklab/locklab/lock/pg"
)

func init() {
	pg.Register()
	mysql.Register()
	memcached.Register()
	etcd.Register()
	libs.Register()
}
