/** The console's daily-cap projection is the budget forecast's (src/budget/forecast.ts). */
export { projectDailyCap, type CapProjection } from '../budget/forecast.js';
