/** The floor's only activity: returns what it is given, doing no work of its own. */
export const floorActivities = {
  echo(value: string): Promise<string> {
    return Promise.resolve(value);
  },
};
export type FloorActivities = typeof floorActivities;
