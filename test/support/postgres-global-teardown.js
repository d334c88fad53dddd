module.exports = require('./postgres-global').teardown;
