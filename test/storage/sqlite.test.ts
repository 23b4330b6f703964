import { runContract } from './contract.js';
import { openSqlite } from './helpers.js';

runContract('sqlite', openSqlite);
